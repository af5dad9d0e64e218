package cs

// Fence is the fencing token of one CS period: what a holder shows a
// resource it uses, so that the resource can refuse a holder that no
// longer holds (docs/fencing.md). A machine sets it when its Entry
// completes; it does not change until the Exit.
//
// The two parts serve different problems (docs/fencing.md states the
// guarantees, which the model checker, the simulator and the trace
// checker verify):
//
//   - Seq: with k = 1, every entry's Seq is at least the Seq of every
//     entry that happened before it, cluster-wide, and greater than it
//     when that entry was another process's (equal Seqs are one process's
//     consecutive CS periods), so a resource that accepts a Seq at least
//     the largest it has accepted refuses every older holder;
//   - Crashed: the processes the machine knew as crashed when the entry
//     completed; with any k, at every moment at most k holders (processes
//     InCS, and processes that crashed while InCS) are named by no
//     holder's Crashed, so a resource that refuses the processes named in
//     the tokens it has seen serves at most k holders once each has shown
//     its token.
type Fence struct {
	Seq     uint64
	Crashed Set
}

// Fencing is implemented by the machines that give every CS entry a
// fencing token: those whose entries can be made while a process they
// count as crashed is still InCS (it only seemed crashed), which is where
// a resource needs to tell the holders apart.
type Fencing interface {
	Machine
	// Fence is the token of the current CS period; it is meaningful only
	// while the machine is InCS.
	Fence() Fence
}

// FenceSeq is the Seq of a request stamped with the Lamport timestamp
// (ts, id) among n processes: ts*n + id, which orders the stamps as
// Lamport's total order does (timestamps first, ties by id) and is never 0
// for ids 1..n. A resource can read the stamp back: ts = (Seq-1)/n,
// id = (Seq-1)%n + 1.
func FenceSeq(ts int64, id ID, n int) uint64 {
	return uint64(ts)*uint64(n) + uint64(id)
}
