/*
 * Raymond's k-mutual exclusion algorithm (K. Raymond, "A distributed
 * algorithm for multiple entries to a critical section", IPL 30(4), 1989)
 * as restated by Bouillaguet, Arantes and Sens (2007), Algorithm 1, lines
 * 1-32 (no failure detector): the model critsec's alg/raymond implements,
 * with the paper's names (last, perm_count, reply_count, defer_count; H is
 * the highest timestamp seen). For SPIN: N processes, K allowed in the CS,
 * BUDGET Entry/Exit calls per process (2 = one entry/exit cycle), FIFO links
 * (one channel per ordered pair), every call and every message handler
 * atomic. The reference model for SPIN; bench/spin/run compares it with
 * critsec check on the same configurations. The assertion is the upper
 * bound #InCS <= K. Every process's loop is a valid end state, so SPIN
 * reports no deadlocks here: what is compared is the safety check and the
 * state space.
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

/* A process's state (alg/raymond: notRequesting, requesting, inCS). */
#define NOT_REQUESTING 0
#define REQUESTING 1
#define IN_CS 2
#define SEND(to, msg, val) assert(len(q[i * N + to]) < CAP); q[i * N + to]!msg, val

mtype = { REQUEST, REPLY };

chan q[N * N] = [CAP] of { mtype, byte }; /* q[from*N + to] */
byte incs = 0;

/* tryEnter: enough permissions (N - K) collected: enter. */
inline tryEnter() {
	if
	:: state == REQUESTING && perm_count >= N - K ->
		state = IN_CS;
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
		:: state == IN_CS || (state == REQUESTING && (last < v || (last == v && i < j))) ->
			defer_count[j]++
		:: else ->
			SEND(j, REPLY, 1)
		fi
	:: m == REPLY ->
		assert(v >= 1 && v <= reply_count[j]);
		reply_count[j] = reply_count[j] - v;
		if
		:: state == REQUESTING && reply_count[j] == 0 ->
			perm_count++;
			tryEnter()
		:: else -> skip
		fi
	fi
}

#define RECV(J) :: atomic { J != i && nempty(q[J * N + i]) -> \
	q[J * N + i]?m, v; j = J; handle(); m = 0; v = 0; j = 0 }

proctype Node(byte i) {
	byte state = NOT_REQUESTING;
	byte H = 0, last = 0, perm_count = 0, budget = BUDGET;
	byte reply_count[N], defer_count[N];
	byte j = 0, v = 0;
	mtype m = 0;
end:
	do
	:: atomic { state == NOT_REQUESTING && budget > 0 -> /* Entry */
		budget--;
		state = REQUESTING;
		last = H + 1;
		perm_count = 0;
		j = 0;
		do
		:: j < N ->
			if
			:: j != i -> SEND(j, REQUEST, last); reply_count[j]++
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		j = 0;
		tryEnter()
	}
	:: atomic { state == IN_CS && budget > 0 -> /* Exit */
		budget--;
		state = NOT_REQUESTING;
		incs--;
		j = 0;
		do
		:: j < N ->
			if
			:: defer_count[j] != 0 -> SEND(j, REPLY, defer_count[j]); defer_count[j] = 0
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
