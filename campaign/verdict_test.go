package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// refuser answers every op with Error, as a SUT that cannot carry any out.
type refuser struct{ sut.Client }

func (r refuser) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	return &conformpb.Response{Id: req.GetId(), Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: "no"}}}, nil
}

// TestBothRefusedIsNoFinding: a request the reference cannot carry out
// either (a fill past impl.MaxBlob) is no finding when the SUT refuses
// it too, and is one when the SUT refuses a request the reference answers.
func TestBothRefusedIsNoFinding(t *testing.T) {
	t.Parallel()
	tg, ok := Lookup(testTargets(), "wire.read-frames")
	if !ok {
		t.Fatal("no target wire.read-frames")
	}
	// A fill past impl.MaxBlob: the reference refuses the request before
	// it makes a byte.
	huge := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Fill: &conformpb.Fill{Length: impl.MaxBlob + 1, Pattern: []byte{0xff}}}}}
	if r := testRegistry().Reference().Handle(context.Background(), tg.request([]proto.Message{&conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{huge}}})); r.GetError() == nil {
		t.Fatalf("the reference answered %v to a fill past its bound, not Error: the test proves nothing", r.GetResult())
	}
	small := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 1, 7}}}}
	ref := builtin.New("builtin:reference", suites.Default().Reference())
	for _, tc := range []struct {
		name  string
		input proto.Message
		want  string
	}{
		{"both refuse", &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{huge}}, ""},
		{"only the SUT refuses", &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{small}}, KindError},
	} {
		e := NewEngine(refuser{ref}, testRegistry(), "refuser", &Seeds{}, 1, time.Minute, nil)
		obs, err := e.Evaluate(context.Background(), tg, []proto.Message{tc.input})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		switch {
		case tc.want == "" && len(obs) != 0:
			t.Errorf("%s: %d observations, first %s; want none", tc.name, len(obs), obs[0].Signature)
		case tc.want != "" && (len(obs) != 1 || obs[0].Kind != tc.want):
			t.Errorf("%s: observations %v, want one of kind %s", tc.name, obs, tc.want)
		}
	}
}

// rewording answers as the reference does, in other words: every worded
// field says the same thing differently and JSON is indented, as an
// independent binding's answers would be.
type rewording struct{ sut.Client }

func (r rewording) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	resp, err := r.Client.Do(ctx, req)
	if err == nil {
		reword(resp.ProtoReflect())
	}
	return resp, err
}

func reword(m protoreflect.Message) {
	eachMessage(m, func(m protoreflect.Message) {
		for _, fd := range wordedIn(m) {
			m.Set(fd, protoreflect.ValueOfString("in other words: "+m.Get(fd).String()))
		}
		if out, ok := m.Interface().(*conformpb.DecodeOutput); ok && out.Json != "" {
			var b bytes.Buffer
			if json.Indent(&b, []byte(out.Json), "", "    ") == nil {
				out.Json = b.String()
			}
		}
	})
}

// TestWordingIsNoFinding: a SUT that answers as the reference does, in its
// own words and its own JSON layout, runs clean on every codec target.
func TestWordingIsNoFinding(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	client := rewording{builtin.New("builtin:reference", suites.Default().Reference())}
	e := NewEngine(client, testRegistry(), "rewording", pool, 1, time.Minute, nil)
	for _, tg := range testTargets() {
		if tg.live != nil {
			continue
		}
		err := e.RunRange(context.Background(), tg, 0, uint64(len(pool.For(tg)))+128, func(f *Finding) error {
			t.Errorf("wording alone made finding %s: %s\n%s", f.Signature, f.Detail, f.Diff)
			return nil
		}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
	}
}
