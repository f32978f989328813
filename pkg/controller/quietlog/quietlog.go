// Package quietlog keeps secrets out of serve's log at every verbosity.
//
// client-go logs through the logger of each request's context
// (klog.FromContext): at -v=8 and above every request and response body,
// a protobuf one as a hex dump, which for a Secret is its data and for a
// TokenReview the bearer token under review (k8s.io/client-go/rest,
// logBody). Neither the content type nor the transport changes that; the
// logger of the context does. Context gives requests a logger that says
// nothing at those levels, so a Secret or a token is never written to the
// log, while the request line and status (-v=6, 7) still are.
package quietlog

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// MaxVerbosity is the first verbosity a quiet context drops: client-go
// logs bodies at 8 and more (headers at 7 carry no body; the bearer token
// they hold is masked by client-go).
const MaxVerbosity = 8

// Context returns ctx whose logger drops messages of verbosity
// MaxVerbosity and above, whatever -v says.
func Context(ctx context.Context) context.Context {
	sink := klog.FromContext(ctx).GetSink()
	// One frame more (cappedSink's own) between client-go and the sink:
	// the file:line klog prints stays client-go's.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return klog.NewContext(ctx, logr.New(cappedSink{sink: sink}))
}

// cappedSink is a logr.LogSink that forwards to sink all but the messages
// at MaxVerbosity and above.
type cappedSink struct {
	sink logr.LogSink
}

var _ logr.CallDepthLogSink = cappedSink{}

// Init does nothing: the sink was initialized by its own logger, and
// klog's Init would change the depth of that shared sink.
func (s cappedSink) Init(logr.RuntimeInfo) {}

func (s cappedSink) Enabled(level int) bool {
	return level < MaxVerbosity && s.sink.Enabled(level)
}

func (s cappedSink) Info(level int, msg string, kv ...any) {
	if level < MaxVerbosity {
		s.sink.Info(level, msg, kv...)
	}
}

func (s cappedSink) Error(err error, msg string, kv ...any) { s.sink.Error(err, msg, kv...) }

func (s cappedSink) WithValues(kv ...any) logr.LogSink {
	return cappedSink{sink: s.sink.WithValues(kv...)}
}

func (s cappedSink) WithName(name string) logr.LogSink {
	return cappedSink{sink: s.sink.WithName(name)}
}

func (s cappedSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return cappedSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}
