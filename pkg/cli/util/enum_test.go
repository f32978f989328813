package util

import (
	"testing"
)

func TestEnum(t *testing.T) {
	values := []string{"Pending", "Running", "Completed"}
	for _, tc := range []struct{ in, want, wantErr string }{
		{in: "", want: ""},
		{in: "Pending", want: "Pending"},
		{in: "pending", want: "Pending"},
		{in: "RUNNING", want: "Running"},
		{in: "Done", wantErr: `unknown --phase "Done": use one of Pending, Running, Completed`},
	} {
		got, err := Enum("phase", tc.in, values)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
