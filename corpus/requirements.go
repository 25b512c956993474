package corpus

import "io/fs"

// RequirementsVersion is the directory of the requirements index, versioned
// like the vectors.
const RequirementsVersion = "requirements/v1"

// Requirements returns the requirements index's files: one JSON file per
// source document, and reconstructed.json. The
// files live here, beside the vectors they cite, because a go:embed pattern
// cannot reach outside its package's directory; package requirements loads
// and validates them.
func Requirements() fs.FS {
	sub, err := fs.Sub(files, RequirementsVersion)
	if err != nil {
		// fs.Sub fails only on an invalid path, and this one is a constant.
		panic(err)
	}
	return sub
}
