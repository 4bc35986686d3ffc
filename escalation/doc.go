// Package escalation holds what tract knows of escalations that wait in a
// repository for their answer: a validated turn whose round of attempts
// ended without an accepted answer, run with tract.EscalateWait, records
// its escalation (the task, the attempts, their diagnoses, the question)
// as a note and a ref, refs/escalations/ID, and waits; anyone with the
// repository answers it (tract.AnswerEscalation, 'tract escalation
// answer'), and the turn goes on exactly as if its own hook had answered.
//
// The life of an escalation's ref:
//
//   - pending: the ref names the escalation's note (a record.WaitingEscalation),
//     whose parent is the turn's last attempt, the branch's tip;
//   - answered: the answer is a note on the escalation's note (a
//     record.EscalationAnswer), and the ref moved to it in the transaction
//     that read it pending: of two answers, one wins and the other is
//     refused with an *AnsweredError naming the first;
//   - taken up: the turn (the process that waited, or one that resumed it)
//     committed the escalation note that records the answer on its branch,
//     and in the same transaction deleted the ref; its reflog keeps the
//     history, and the commits, now orphans, stay for gc's expiry.
//
// While the ref exists gc keeps the escalation and the turn's attempts
// (every ref is a root of gc). This package holds the ids, the listing
// record (Escalation), the errors, the wait, and the reads and writes of
// an escalation's notes and ref in a transaction (Record, Give, TakeUp);
// package tract runs the transactions and writes the commits (NoteFunc).
package escalation
