package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func token(t *testing.T, member int, seq, crashed string) Token {
	t.Helper()
	tok, err := ParseToken(member, seq, crashed)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestStoreK1: with k = 1, a holder whose Seq is below an accepted one is
// refused, and so is a holder a later token names as crashed; the same
// holder may write again with its own Seq. The state survives reopening.
func TestStoreK1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.jsonl")
	st, err := Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		tok   Token
		stale bool
	}{
		{token(t, 1, "4", ""), false},  // P1 holds
		{token(t, 1, "4", ""), false},  // P1 again, same period
		{token(t, 2, "8", "1"), false}, // P1 paused, declared crashed; P2 holds
		{token(t, 1, "4", ""), true},   // P1 resumes: fenced
		{token(t, 3, "6", ""), true},   // an older token
	}
	for i, s := range steps {
		if err := st.Write(s.tok, "x"); errors.Is(err, ErrStale) != s.stale || err != nil && !s.stale {
			t.Fatalf("step %d %+v: %v, want stale %v", i, s.tok, err, s.stale)
		}
	}
	st.Close()
	st, err = Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(token(t, 1, "4", ""), "x"); !errors.Is(err, ErrStale) {
		t.Errorf("after reopening, P1's old token: %v, want stale", err)
	}
	if err := st.Write(token(t, 2, "8", "1"), "x"); err != nil {
		t.Errorf("after reopening, P2: %v", err)
	}
}

// TestStoreK2: with k = 2, Seq does not order holders; a member named as
// crashed by any token seen is refused.
func TestStoreK2(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "data.jsonl"), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, s := range []struct {
		tok   Token
		stale bool
	}{
		{token(t, 1, "10", ""), false},
		{token(t, 2, "7", ""), false}, // two holders at once: k = 2
		{token(t, 3, "12", "1"), false},
		{token(t, 1, "10", ""), true},
		{token(t, 2, "7", ""), false},
	} {
		if err := st.Write(s.tok, "x"); errors.Is(err, ErrStale) != s.stale || err != nil && !s.stale {
			t.Fatalf("step %d %+v: %v, want stale %v", i, s.tok, err, s.stale)
		}
	}
}

// TestHandler: 200 for a write, 409 for a stale token, 400 with one line
// for a malformed one.
func TestHandler(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "data.jsonl"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(handler(st))
	defer srv.Close()
	for _, c := range []struct {
		query string
		code  int
		body  string
	}{
		{"member=2&seq=8&crashed=1", http.StatusOK, "ok"},
		{"member=1&seq=4&crashed=", http.StatusConflict, "stale fencing token: member 1 was declared crashed by a later holder"},
		{"member=3&seq=x", http.StatusBadRequest, `seq "x": want the token's Seq, a non-negative integer (CRITSEC_FENCE)`},
		{"member=3&seq=9&crashed=1,a", http.StatusBadRequest, `crashed "1,a": want comma-separated member ids (CRITSEC_FENCE_CRASHED)`},
	} {
		resp, err := http.Post(srv.URL+"/write?"+c.query, "text/plain", strings.NewReader("data"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.code || strings.TrimSpace(string(b)) != c.body {
			t.Errorf("%s: %d %q %v, want %d %q", c.query, resp.StatusCode, b, err, c.code, c.body)
		}
	}
}

// TestOpenRefusesForeignFile: a file that is not the store's is refused
// with the line that is wrong.
func TestOpenRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.jsonl")
	if err := os.WriteFile(path, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, 1); err == nil || !strings.Contains(err.Error(), "line 1: not a record of this store") {
		t.Errorf("Open: %v", err)
	}
}
