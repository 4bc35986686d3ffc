// Package loopback gives tests loopback addresses that refuse connections.
//
// A port that was free a moment ago is not enough: a test server started
// in parallel may be given it, or a client connecting to it may be given
// it as its own source port (TCP's self-connect), and either answers in
// place of the refusal. Refused holds the port for as long as the caller
// needs it.
package loopback
