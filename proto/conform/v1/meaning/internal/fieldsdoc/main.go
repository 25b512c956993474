// Command fieldsdoc writes docs/fields.md from the declaration of what
// every conform.v1 answer field means. Run it through go generate in
// proto/conform/v1/meaning.
package main

import (
	"fmt"
	"os"

	"github.com/conform-suite/conform/proto/conform/v1/meaning"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fieldsdoc OUT.md")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(meaning.Markdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fieldsdoc:", err)
		os.Exit(1)
	}
}
