//go:build !unix

package reports

import "os/exec"

// killGroup leaves cmd as it is: outside Unix, cancelling it kills the
// browser process alone.
func killGroup(cmd *exec.Cmd) {}
