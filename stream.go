package tract

// AttemptDelta is one piece of an attempt's answer as the model streams
// it (see OnAttemptDelta).
type AttemptDelta struct {
	// Attempt is the 1-based number of the attempt the piece belongs to,
	// counting on across the rounds of an escalation, as Attempt.Number.
	Attempt int
	// Max is the number of the last attempt the round may make, as
	// Attempt.Max.
	Max int
	// Text is the piece of the answer.
	Text string
}

// OnAttemptDelta streams every attempt's answer to fn as it arrives, each
// piece with the number of its attempt, so that a caller can show the
// attempts of a validated turn apart: a new Attempt number starts a new
// answer, and the OnAttempt report of that number says whether it was
// accepted. A model call that fails after some pieces arrived is not an
// attempt (no OnAttempt report follows); the turn then ends with its
// error. It may be given with OnDelta; both receive every piece.
func OnAttemptDelta(fn func(AttemptDelta)) ChatOption {
	return func(cfg *chatConfig) { cfg.onAttemptDelta = fn }
}

// deltaFunc is the OnDelta of the current attempt's request: nil (no
// stream) when neither OnDelta nor OnAttemptDelta was given.
func (g *generation) deltaFunc() func(string) {
	plain, numbered := g.cfg.onDelta, g.cfg.onAttemptDelta
	if numbered == nil {
		return plain
	}
	n, max := g.attempt, g.maxAttempt()
	return func(d string) {
		if plain != nil {
			plain(d)
		}
		numbered(AttemptDelta{Attempt: n, Max: max, Text: d})
	}
}
