/*
 * Raymond's k-mutual exclusion algorithm (K. Raymond, "A distributed
 * algorithm for multiple entries to a critical section", IPL 30(4), 1989),
 * the model critsec's alg/raymond implements, for SPIN: N processes, K
 * allowed in the CS, BUDGET Entry/Exit calls per process (2 = one
 * entry/exit cycle), FIFO links (one channel per ordered pair), every call
 * and every message handler atomic. The reference run of issue 3; bench/spin/run
 * compares it with critsec check on the same configuration. The assertion
 * is the upper bound #InCS <= K; processes end in a valid end state only
 * when no message is left.
 */
#ifndef N
#define N 4
#endif
#ifndef K
#define K 2
#endif
#ifndef BUDGET
#define BUDGET 2
#endif
#if N > 5
#error this model receives from at most 5 processes: add RECV lines
#endif
/* A link carries at most one REQUEST and one REPLY per entry/exit cycle;
 * SEND asserts that the channel has room, since a send to a full channel
 * would block and split the atomic step. */
#define CAP BUDGET
#define SEND(to, msg, val) assert(len(q[i * N + to]) < CAP); q[i * N + to]!msg, val

mtype = { REQUEST, REPLY };

chan q[N * N] = [CAP] of { mtype, byte }; /* q[from*N + to] */
byte incs = 0;

/* tryEnter: enough permissions (N - K) collected: enter. */
inline tryEnter() {
	if
	:: state == 1 && perm >= N - K ->
		state = 2;
		incs++;
		assert(incs <= K)
	:: else -> skip
	fi
}

/* handle: message m with value v from process j (alg/raymond Receive). */
inline handle() {
	if
	:: m == REQUEST ->
		if
		:: v > H -> H = v
		:: else -> skip
		fi;
		if
		:: state == 2 || (state == 1 && (last < v || (last == v && i < j))) ->
			defer[j]++
		:: else ->
			SEND(j, REPLY, 1)
		fi
	:: m == REPLY ->
		assert(v >= 1 && v <= reply[j]);
		reply[j] = reply[j] - v;
		if
		:: state == 1 && reply[j] == 0 ->
			perm++;
			tryEnter()
		:: else -> skip
		fi
	fi
}

#define RECV(J) :: atomic { J != i && nempty(q[J * N + i]) -> \
	q[J * N + i]?m, v; j = J; handle(); m = 0; v = 0; j = 0 }

proctype Node(byte i) {
	byte state = 0; /* 0: not requesting, 1: requesting, 2: in the CS */
	byte H = 0, last = 0, perm = 0, budget = BUDGET;
	byte reply[N], defer[N];
	byte j = 0, v = 0;
	mtype m = 0;
end:
	do
	:: atomic { state == 0 && budget > 0 -> /* Entry */
		budget--;
		state = 1;
		last = H + 1;
		perm = 0;
		j = 0;
		do
		:: j < N ->
			if
			:: j != i -> SEND(j, REQUEST, last); reply[j]++
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		j = 0;
		tryEnter()
	}
	:: atomic { state == 2 && budget > 0 -> /* Exit */
		budget--;
		state = 0;
		incs--;
		j = 0;
		do
		:: j < N ->
			if
			:: defer[j] != 0 -> SEND(j, REPLY, defer[j]); defer[j] = 0
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		j = 0
	}
	RECV(0)
	RECV(1)
#if N > 2
	RECV(2)
#endif
#if N > 3
	RECV(3)
#endif
#if N > 4
	RECV(4)
#endif
	od
}

init {
	atomic {
		byte p = 0;
		do
		:: p < N -> run Node(p); p++
		:: else -> break
		od
	}
}
