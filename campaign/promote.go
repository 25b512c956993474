package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/suite"
	"google.golang.org/protobuf/proto"
)

// Promote turns a finding into a golden vector of its suite, in the
// suite's corpus format (corpus/<suite>/v1/<name>.json), with the expected
// outcome a fresh reference of reg gives for the finding's input. specRef
// is the section the vector enforces, which only a person can say; id
// defaults to <suite>/v1/fuzz-<signature hash>. Promoting is for the targets
// whose declaration says how (gen.Target.Promote): those whose inputs a
// corpus vector can hold.
func Promote(f *Finding, reg *suite.Registry, specRef, id, title string) ([]byte, error) {
	targets := Targets(reg)
	t, inputs, err := f.ParseInputs(targets)
	if err != nil {
		return nil, err
	}
	if t.decl.Promote == nil {
		var can []string
		for _, o := range targets {
			if o.decl.Promote != nil {
				can = append(can, o.Name)
			}
		}
		return nil, fmt.Errorf("target %s has no corpus vector format; promotable targets are %s", t.Name, strings.Join(can, ", "))
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("finding %s needs %d inputs together; a vector holds one", f.Signature, len(inputs))
	}
	if id == "" {
		id = t.Suite + "/v1/fuzz-" + f.Signature[strings.LastIndexByte(f.Signature, '-')+1:]
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(t.Suite) + `/v1/[a-z0-9][a-z0-9-]*$`).MatchString(id) {
		return nil, fmt.Errorf("--id %q: a %s vector's ID is %s/v1/NAME, NAME in lower-case letters, digits and dashes", id, t.Suite, t.Suite)
	}
	if title == "" {
		title = fmt.Sprintf("fuzz finding %s: %s %s", f.Signature, f.Kind, f.Detail)
	}
	ref := reg.Reference()
	answer := func(in proto.Message) (proto.Message, error) {
		outs, ans, msg := t.outputs(ref.Handle(context.Background(), t.request([]proto.Message{in})))
		if ans != answerOK || len(outs) != 1 {
			return nil, fmt.Errorf("the reference cannot answer this input (%s); it makes no vector", msg)
		}
		return outs[0], nil
	}
	v, err := t.decl.Promote(inputs[0], gen.Vector{ID: id, Spec: specRef, Title: title}, answer)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
