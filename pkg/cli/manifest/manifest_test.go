package manifest

import "testing"

func TestDocuments(t *testing.T) {
	for in, want := range map[string]int{
		"":                             0,
		"# only a comment\n":           0,
		"a: 1\n":                       1,
		"# head\n---\na: 1\n---\n":     1,
		"a: 1\n---\nb: 2\n":            2,
		`{"apiVersion": "v1", "a": 1}`: 1,
		"---\n# c\n---\na: 1\n---\n\n": 1,
	} {
		docs, err := documents([]byte(in))
		if err != nil || len(docs) != want {
			t.Errorf("%q: %d documents (%v), want %d", in, len(docs), err, want)
		}
	}
}
