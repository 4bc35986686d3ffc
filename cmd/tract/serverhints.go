package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/store/postgres"
)

// databaseDamageHint is what to do about damage fsck found in a database:
// a database has no --salvage (that reads a file around its engine).
const databaseDamageHint = "A database has no 'tract fsck --salvage' (it is for files): restore the database from a backup\n" +
	"(pg_dump, or point-in-time recovery), then run 'tract fsck' again to check it clean."

// hintOn is errorHint for the repository f names: damage in a database
// has other remedies than damage in a file.
func hintOn(f *Factory, err error) string {
	if (errors.Is(err, tract.ErrDamaged) || errors.Is(err, tract.ErrCorrupt)) && onDatabase(f) {
		return "'tract fsck' reports what is damaged. " + databaseDamageHint
	}
	return errorHint(err)
}

// onDatabase reports whether the repository of the command line is in a
// database.
func onDatabase(f *Factory) bool {
	p, err := f.RepoPath(false)
	return err == nil && tract.IsDatabaseURL(p)
}

// serverHint says what to do about a database server that is unreachable,
// slow, gone or refusing (a *postgres.ServerError): what the URL can
// change, beside what the error says.
func serverHint(err error) string {
	switch {
	case errors.Is(err, postgres.ErrCommitUnknown):
		return "The server may have written the commit before the connection broke. Look with 'tract log'\n" +
			"(or 'tract log --all') before running the command again, so that it is not done twice."
	case errors.Is(err, postgres.ErrTimeout):
		return "If the server is only slow or busy (another writer's long gc or import holds the repository),\n" +
			"wait longer with reply_timeout in the URL of --db or TRACT_DB (for example reply_timeout=2m; default 30s)."
	case errors.Is(err, postgres.ErrConnectionLost):
		return "The server restarted, ended the session, or the network broke. Run the command again once it answers."
	case errors.Is(err, postgres.ErrNoPrimary) && errors.Is(err, postgres.ErrUnreachable):
		return "Every server of the URL that answered is a standby. Once one is promoted (pg_ctl promote, or\n" +
			"SELECT pg_promote()), tract finds it among the hosts of --db or TRACT_DB: run the command again."
	case errors.Is(err, postgres.ErrNoPrimary):
		return "tract writes on the primary. With a primary and standbys, give every host in --db or TRACT_DB and\n" +
			"target_session_attrs=read-write (postgres://USER@HOST1:PORT,HOST2:PORT/DB?target_session_attrs=read-write)."
	case errors.Is(err, postgres.ErrUnreachable):
		return "Check the host and port in --db or TRACT_DB, that the server runs and accepts connections from this\n" +
			"machine (listen_addresses, firewall); connect_timeout=SECONDS in the URL sets the wait (default 10)."
	case errors.Is(err, postgres.ErrTooManyConnections):
		return "Other clients hold every connection the server allows. Run the command again later, lower\n" +
			"pool_max_conns in the URLs of many processes, put PgBouncer in front, or raise max_connections."
	case errors.Is(err, postgres.ErrAuthFailed):
		return "Check the user and password in the URL of --db or TRACT_DB, in PGPASSWORD, or in ~/.pgpass\n" +
			"(which must have mode 0600)."
	}
	return ""
}

// unsentHint says what to fix when a chat wrote nothing because its first
// model call showed the setup to be wrong (a *tract.UnsentError; see
// llm.APIError.Setup): the model server's settings of provider, and model,
// the model asked.
func unsentHint(err error, provider, model string) string {
	var api *llm.APIError
	if !errors.As(err, &api) {
		return ""
	}
	keyEnv, baseEnv, urlShape := llm.EnvAPIKey, llm.EnvBaseURL, "a base URL usually ends in /v1 (Ollama: http://localhost:11434/v1)"
	if provider == llm.ProviderAnthropic {
		keyEnv, baseEnv, urlShape = llm.EnvAnthropicAPIKey, llm.EnvAnthropicBaseURL, "Anthropic's is "+llm.DefaultAnthropicBaseURL
	}
	base := baseEnv + "=" + api.BaseURL
	var fix string
	switch {
	case api.Setup == llm.SetupUnreachable && errors.As(err, new(*net.DNSError)):
		fix = fmt.Sprintf("The host name in %s does not resolve: check its spelling; %s.", base, urlShape)
	case api.Setup == llm.SetupUnreachable:
		fix = fmt.Sprintf("Is the server running? No server answered at %s; %s.", base, urlShape)
	case api.Setup == llm.SetupAuth:
		fix = fmt.Sprintf("The server at %s refused the key in %s: set one it accepts.", base, keyEnv)
	case api.Setup == llm.SetupEndpoint:
		fix = fmt.Sprintf("The server at %s has no chat endpoint there: %s.", base, urlShape)
	case api.Setup == llm.SetupNotAPI:
		fix = fmt.Sprintf("%s answered with a web page, not the API: %s.", base, urlShape)
	case api.Setup == llm.SetupModel:
		fix = fmt.Sprintf("The server does not know the model %q: 'tract models' lists those it has; choose one with\n"+
			"--model NAME, TRACT_MODEL or 'tract config set model NAME'.", model)
	default:
		return ""
	}
	return fix + "\nNothing was written: your message is not on the branch. Fix the setup and send it again."
}

// timeoutHint says how to wait longer for a model, after err ended a call.
func timeoutHint(err *llm.TimeoutError) string {
	if err.Idle {
		return fmt.Sprintf("The server sent nothing for %s. If it is only slow (a model loading, a long prompt), wait longer:\n"+
			"--timeout 10m, TRACT_TIMEOUT=10m or 'tract config set timeout 10m' (0 waits forever).", err.After)
	}
	return fmt.Sprintf("The answer took longer than %s in all (%d times --timeout). Wait longer with --timeout\n"+
		"(TRACT_TIMEOUT, 'tract config set timeout'), or ask for a shorter answer (--max-tokens).", err.After, callTimeouts)
}
