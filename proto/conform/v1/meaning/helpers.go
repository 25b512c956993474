package meaning

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// field returns the descriptor of the field named name in m's message.
func field(m protoreflect.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("meaning: %s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

// get returns the value of m's field name, the default when m is invalid.
func get(m protoreflect.Message, name protoreflect.Name) protoreflect.Value {
	if !valid(m) {
		return protoreflect.Value{}
	}
	return m.Get(field(m, name))
}

func has(m protoreflect.Message, name protoreflect.Name) bool {
	return valid(m) && m.Has(field(m, name))
}

// both returns a condition that holds when pred holds on each side that has
// the holder: a field defined by its own answer is compared only where both
// answers say it is defined (where they disagree on that, the field that
// says so differs already).
func both(pred func(m protoreflect.Message) bool) func(c *Context) bool {
	return func(c *Context) bool {
		w, g := c.Want(), c.Got()
		return (!valid(w) || pred(w)) && (!valid(g) || pred(g))
	}
}

// sides calls f on each valid side.
func sides(want, got protoreflect.Message, f func(m protoreflect.Message)) {
	if valid(want) {
		f(want)
	}
	if valid(got) {
		f(got)
	}
}

// enumIs reports whether m's enum field name holds one of vals.
func enumIs(name protoreflect.Name, vals ...protoreflect.EnumNumber) func(m protoreflect.Message) bool {
	return func(m protoreflect.Message) bool {
		v := get(m, name).Enum()
		for _, x := range vals {
			if v == x {
				return true
			}
		}
		return false
	}
}

func notSet(name protoreflect.Name) func(m protoreflect.Message) bool {
	return func(m protoreflect.Message) bool { return !has(m, name) }
}

func isSet(name protoreflect.Name) func(m protoreflect.Message) bool {
	return func(m protoreflect.Message) bool { return has(m, name) }
}

func isTrue(name protoreflect.Name) func(m protoreflect.Message) bool {
	return func(m protoreflect.Message) bool { return get(m, name).Bool() }
}

func isFalse(name protoreflect.Name) func(m protoreflect.Message) bool {
	return func(m protoreflect.Message) bool { return !get(m, name).Bool() }
}

func and(ps ...func(c *Context) bool) func(c *Context) bool {
	return func(c *Context) bool {
		for _, p := range ps {
			if !p(c) {
				return false
			}
		}
		return true
	}
}

func not(p func(c *Context) bool) func(c *Context) bool {
	return func(c *Context) bool { return !p(c) }
}

// unrefused holds where neither answer carries a refusal message: what
// accompanies a refusal means nothing.
var unrefused = &Condition{Doc: "unless refused", Holds: both(notSet("refusal"))}

// notRefused holds where neither answer's refused flag is set.
var notRefused = &Condition{Doc: "unless refused", Holds: both(isFalse("refused"))}
