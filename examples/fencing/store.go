package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Token is a fencing token as critsec gives it to the command it runs
// (CRITSEC_FENCE and CRITSEC_FENCE_CRASHED) and as `critsec ctl status`
// prints it, with the member that holds it.
type Token struct {
	Member  int    `json:"member"`
	Seq     uint64 `json:"seq"`
	Crashed []int  `json:"crashed"`
}

// ParseToken reads a token from the environment's strings: seq a decimal
// number, crashed a comma-separated list of member ids (may be empty).
func ParseToken(member int, seq, crashed string) (Token, error) {
	t := Token{Member: member}
	if member < 1 {
		return t, fmt.Errorf("member %d: want the holder's member id, >= 1", member)
	}
	s, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return t, fmt.Errorf("seq %q: want the token's Seq, a non-negative integer (CRITSEC_FENCE)", seq)
	}
	t.Seq = s
	for _, f := range strings.Split(crashed, ",") {
		if f == "" {
			continue
		}
		id, err := strconv.Atoi(f)
		if err != nil || id < 1 {
			return t, fmt.Errorf("crashed %q: want comma-separated member ids (CRITSEC_FENCE_CRASHED)", crashed)
		}
		t.Crashed = append(t.Crashed, id)
	}
	return t, nil
}

// ErrStale is returned for a write whose token a newer one has fenced.
var ErrStale = errors.New("stale fencing token")

// Store is a file-backed resource that refuses stale holders: an
// append-only file of records, each with the token of the holder that
// wrote it. It keeps, from every token it has seen, the union of the
// Crashed sets, and refuses a member named there, whatever k; with k = 1
// it also keeps the largest Seq it has accepted and refuses a smaller one
// (docs/fencing.md). Its state is the file's: reopening replays it.
type Store struct {
	mu     sync.Mutex
	f      *os.File
	k      int
	maxSeq uint64
	named  map[int]bool
}

// record is one line of the file.
type record struct {
	Token
	Data string `json:"data"`
}

// Open opens (or creates) the store in file path for k-mutual exclusion.
func Open(path string, k int) (*Store, error) {
	if k < 1 {
		return nil, fmt.Errorf("k = %d: want the cluster's k, >= 1", k)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s := &Store{f: f, k: k, named: map[int]bool{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s line %d: not a record of this store: %v", path, line, err)
		}
		s.note(r.Token)
		s.maxSeq = max(s.maxSeq, r.Seq)
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// note adds the members t names to the ones the store refuses.
func (s *Store) note(t Token) {
	for _, id := range t.Crashed {
		s.named[id] = true
	}
}

// Write appends data with token t, or refuses it with an error wrapping
// ErrStale when a token the store has seen names t's member as crashed,
// or (k = 1) when t's Seq is below the largest accepted. A refused token
// still teaches the store its Crashed set: those members were declared
// crashed by the cluster.
func (s *Store) Write(t Token, data string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note(t)
	switch {
	case s.named[t.Member]:
		return fmt.Errorf("%w: member %d was declared crashed by a later holder", ErrStale, t.Member)
	case s.k == 1 && t.Seq < s.maxSeq:
		return fmt.Errorf("%w: seq %d is below seq %d, already accepted", ErrStale, t.Seq, s.maxSeq)
	}
	t.Crashed = slices.Sorted(slices.Values(t.Crashed))
	b, err := json.Marshal(record{Token: t, Data: data})
	if err != nil {
		return err
	}
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.maxSeq = max(s.maxSeq, t.Seq)
	return nil
}

// Close closes the store's file.
func (s *Store) Close() error { return s.f.Close() }
