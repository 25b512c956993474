package mutant

import "testing"

// TestNamesAreUnique: builtin:mutant/NAME must name one mutant, and the
// mutation table and selftest report by name.
func TestNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, m := range All() {
		if other, dup := seen[m.Name]; dup {
			t.Errorf("mutant name %q used by suites %s and %s", m.Name, other, m.Suite)
		}
		seen[m.Name] = m.Suite
		if m.Name == "" || m.Suite == "" || m.Bug == "" || m.apply == nil {
			t.Errorf("mutant %q: name, suite, bug and apply are required", m.Name)
		}
		if got, ok := Lookup(m.Name); !ok || got.Suite != m.Suite {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Suite, ok)
		}
	}
}
