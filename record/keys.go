package record

// The metadata keys tract writes and reads back. docs/metadata.md lists
// each with the commits it appears on.
const (
	KeyAttempt           = "attempt"
	KeyDiagnosis         = "diagnosis"
	KeyDuration          = "duration_ms"
	KeyError             = "error"
	KeyEscalation        = "escalation"
	KeyEscalationAnswer  = "escalation_answer"
	KeyFailure           = "failure"
	KeyFixed             = "fixed"
	KeyModel             = "model"
	KeyPinned            = "pinned"
	KeyProvenance        = "provenance"
	KeyProvider          = "provider"
	KeyRestore           = "restore"
	KeyShape             = "shape"
	KeyStructured        = "structured_output"
	KeyTask              = "task"
	KeyToolStep          = "tool_step"
	KeyUsage             = "usage"
	KeyValid             = "valid"
	KeyValidatorError    = "validator_error"
	KeyValidators        = "validators"
	KeyWaitingEscalation = "waiting_escalation"
	KeyWeight            = "weight"
)

// Key describes one of tract's metadata keys.
type Key struct {
	// Name is the key.
	Name string
	// Want says what JSON its value must be, as a *MetaTypeError says it.
	Want string
	// Doc says what the value is and which commits carry it.
	Doc string
}

// What tract reads the values of its metadata keys as.
const (
	wantBool   = "a boolean (true or false)"
	wantInt    = "a whole number"
	wantString = "a string"
	wantObject = "an object"
	wantHash   = "a full commit hash (64 hex characters)"
	wantTime   = "a time (an RFC 3339 string)"
)

// Keys returns every metadata key tract reads back, in the order Check
// checks them (by name).
func Keys() []Key {
	keys := keyTable()
	return keys[:]
}

// keyTable is the table of Keys, as an array: Check ranges over it on
// every commit with metadata, and an array is built on the stack.
func keyTable() [23]Key {
	return [...]Key{
		{KeyAttempt, wantInt, "an answer's (or steering message's) attempt number, from 1"},
		{KeyDiagnosis, wantString, "why the validators rejected an answer"},
		{KeyDuration, wantInt, "on each answer (and the error commit of a failed model call): how long the attempt took, model call and validation, in milliseconds"},
		{KeyError, wantString, "on the error commit of a failed model call: the call's error"},
		{KeyEscalation, wantObject, "on a note of a turn whose escalation hook answered: its Escalation record"},
		{KeyEscalationAnswer, wantObject, "on the note that answers an escalation that waited in the repository (refs/escalations/ID moves to it): its EscalationAnswer record"},
		{KeyFailure, wantObject, "on each failed attempt (and the error commit of a failed model call): its Failure record"},
		{KeyFixed, wantObject, "on an answer a validator fixed, and on the fixed answer committed in its place: its Fix record"},
		{KeyModel, wantString, "the model that answered (on the error commit of a failed model call, the model asked)"},
		{KeyPinned, wantBool, "true keeps the commit out of a compress's summaries, as system prompts are"},
		{KeyProvenance, wantObject, "on the accepted answer (and the error commit of an exhausted turn): its Provenance"},
		{KeyProvider, wantString, "on the error commit of a failed model call: the kind of server asked (\"openai\"), when the client says"},
		{KeyRestore, "a commit hash (64 hexadecimal digits)", "on the answers, feedback and error commits of a turn with the fresh retry context or with tools: the turn's restore point, which their chains no longer lead back to (or lead back to through tool steps)"},
		{KeyShape, wantObject, "on a commit whose message is more than a role and a text (content parts, tool calls, …): the message object without \"role\" (and without \"content\" when the content is the commit's text), in canonical JSON"},
		{KeyStructured, wantObject, "on each answer of a turn that asked for structured output: its Structured record"},
		{KeyTask, wantString, "the task id of a validated turn, on every commit of the turn"},
		{KeyToolStep, wantObject, "on the commits of a tool step of a validated turn (the assistant's tool-call message and each tool result): its ToolStep record"},
		{KeyUsage, wantObject, "an answer's token usage (llm.Usage); on an error commit, summed over the turn"},
		{KeyValid, wantBool, "whether the validators accepted the answer"},
		{KeyValidatorError, wantString, "a validator that could not run on the answer: its error"},
		{KeyValidators, "an array of strings", "on each answer of a turn with validators (and the error commit of an exhausted one): the validators' specs as given (\"json\", \"cmd:go test ./...\")"},
		{KeyWaitingEscalation, wantObject, "on the note that holds an escalation waiting in the repository for its answer (refs/escalations/ID): its WaitingEscalation record"},
		{KeyWeight, "0 or 1", "a message's training weight, as an import of the OpenAI fine-tuning format read it; export writes it back"},
	}
}
