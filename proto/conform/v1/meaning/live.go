package meaning

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// samplesForm: a live report lists samples up to a bound the SUT chooses
// (live.proto: "up to a bound the SUT chooses; unrecorded counts those
// beyond it"), so when either side stopped recording, the lists compare up
// to the shorter.
var samplesForm = &Form{
	Doc: "in arrival order, up to the shorter list when either side reports samples beyond its recording bound (unrecorded > 0)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		if !valid(w) || !valid(g) {
			return
		}
		if get(c.Original(w), "unrecorded").Uint() == 0 && get(c.Original(g), "unrecorded").Uint() == 0 {
			return
		}
		lw, lg := listOf(w, field(w, "samples")), listOf(g, field(g, "samples"))
		n := min(lenOf(lw), lenOf(lg))
		for _, l := range []protoreflect.List{lw, lg} {
			if l != nil && l.Len() > n {
				l.Truncate(n)
			}
		}
	},
}

// viaAnswer documents a field that is compared through another's form.
func viaForm(doc string) *Form { return &Form{Doc: doc} }
