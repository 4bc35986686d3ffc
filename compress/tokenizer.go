package compress

import "unicode/utf8"

// Tokenizer counts the tokens of a text, as a model would see it. Counts
// need not be exact; the default, Estimator, only estimates.
type Tokenizer interface {
	Count(text string) int
}

// TokenizerFunc adapts a function to the Tokenizer interface.
type TokenizerFunc func(text string) int

// Count returns f(text).
func (f TokenizerFunc) Count(text string) int { return f(text) }

// Estimator is the default Tokenizer: it counts with EstimateTokens.
type Estimator struct{}

var _ Tokenizer = Estimator{}

// Count returns EstimateTokens(text).
func (Estimator) Count(text string) int { return EstimateTokens(text) }

// EstimateTokens estimates the tokens of text as one per four characters
// (Unicode code points, not bytes), rounded up: ceil(runes/4), the rule of
// dag.EstimateTokens. That is the usual rule of thumb for English with
// OpenAI's tokenizers; code, numbers and most other languages take more
// tokens than it says. Counts made with it are estimates and should be
// labelled so.
func EstimateTokens(text string) int {
	return (utf8.RuneCountInString(text) + 3) / 4
}

// MessageOverhead is the number of tokens a message is taken to cost in a
// model's context beyond its text (its role and separators), as OpenAI's
// chat format counts it.
const MessageOverhead = 4

// MessageTokens returns the tokens text costs as one message in a model's
// context: tok.Count(text) + MessageOverhead. A nil tok means Estimator.
func MessageTokens(tok Tokenizer, text string) int {
	if tok == nil {
		tok = Estimator{}
	}
	return tok.Count(text) + MessageOverhead
}

// ItemsTokens returns the tokens items cost in a model's context, each as
// one message: the sum of their MessageTokens. A nil tok means Estimator.
func ItemsTokens(tok Tokenizer, items []Item) int {
	n := 0
	for _, it := range items {
		n += MessageTokens(tok, it.Text)
	}
	return n
}
