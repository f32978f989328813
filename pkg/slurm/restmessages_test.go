package slurm

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// errorsAnswer is a slurmrestd answer listing n errors, each with a
// description of desc bytes, and as many warnings.
func errorsAnswer(n, desc int) []byte {
	var b bytes.Buffer
	d := strings.Repeat("é", desc/2)
	for _, key := range []string{"errors", "warnings"} {
		if key == "errors" {
			b.WriteString(`{"errors":[`)
		} else {
			b.WriteString(`],"warnings":[`)
		}
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"description":"%s %d","error_number":%d,"error":"Unspecified error","source":"slurmctld"}`, d, i, 1000+i)
		}
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestRESTErrorsBounded (issue 58): a slurmrestd answering HTTP 500 with
// 100 000 error entries gives an error that names the first maxEntries,
// each text cut to maxText, and counts the others; its message is a few
// KiB, far within a condition's 32 768 characters. Before, every entry
// was kept and concatenated one string at a time (quadratic), and the
// NodeSet's condition made of it was refused by the API server.
func TestRESTErrorsBounded(t *testing.T) {
	body := errorsAnswer(100_000, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.version = "v0.0.44"
	err = c.Refresh(context.Background())
	if err == nil {
		t.Fatal("an HTTP 500 answer: no error")
	}
	msg := err.Error()
	if len(msg) > 8<<10 {
		t.Errorf("the error is %d bytes, want at most 8 KiB", len(msg))
	}
	if want := fmt.Sprintf("… and %d more errors", 100_000-maxEntries); !strings.Contains(msg, want) {
		t.Errorf("the error does not say %q: %.300s…", want, msg)
	}
	if !strings.Contains(msg, "(error 1000)") || strings.Contains(msg, fmt.Sprintf("(error %d)", 1000+maxEntries)) {
		t.Errorf("the error does not hold exactly the first %d entries: %.300s…", maxEntries, msg)
	}
}

// TestClip: a text is cut at a character's start and says what it left
// out; a short one is left alone.
func TestClip(t *testing.T) {
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip(short) = %q", got)
	}
	got := clip(strings.Repeat("é", 10), 5) // 20 bytes
	if got != "éé… (16 more bytes)" {
		t.Errorf("clip = %q", got)
	}
	n := restNode{Reason: strings.Repeat("r", 1<<20), State: stringList(strings.Split(strings.Repeat("DRAIN,", 1000), ","))}.bounded()
	if len(n.Reason) > maxReason+32 || len(n.State) != maxStates {
		t.Errorf("a node bounded: reason %d bytes, %d states", len(n.Reason), len(n.State))
	}
}
