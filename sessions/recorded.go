package sessions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train/plan"
)

// fromMetadata is where a value taken from a safetensors file's own metadata came from.
const fromMetadata = "the file's metadata"

// recorded is the one reader of the metadata that an RTF layer's trunc_len and an S4D
// layer's dt transform are read from (rtfTruncLen, s4dDtTransform), and of where it is
// (from, for notes and errors): a safetensors file's own metadata; for a .pt or .npz file,
// which hold none, the values its manifest beside it (PATH.manifest.json, written by
// distill) records for it, where that manifest names this very file (base name, size and
// SHA-256: a file replaced since is not read with another's values); else none.
func recorded(af *arrays.File) (meta map[string]string, from string) {
	if af.Format == arrays.FormatSafetensors {
		return af.Metadata(), fromMetadata
	}
	if af.Path() == "" {
		return nil, ""
	}
	m := manifestBeside(af.Path())
	if len(m) == 0 {
		return nil, ""
	}
	return m, filepath.Base(af.Path()) + ".manifest.json beside it"
}

// besideCache keeps manifestBeside's last answer, for the file's path, size and time:
// import and distill ask once per layer, and each answer hashes the file.
var besideCache struct {
	sync.Mutex
	path string
	size int64
	mod  time.Time
	meta map[string]string
}

// manifestBeside returns the metadata recorded for the file at path by the manifest beside
// it (plan.Manifest.Metadata), nil where there is none or it names another file.
func manifestBeside(path string) map[string]string {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	besideCache.Lock()
	defer besideCache.Unlock()
	if besideCache.path == path && besideCache.size == fi.Size() && besideCache.mod.Equal(fi.ModTime()) {
		return besideCache.meta
	}
	meta := readManifestBeside(path)
	besideCache.path, besideCache.size, besideCache.mod, besideCache.meta = path, fi.Size(), fi.ModTime(), meta
	return meta
}

func readManifestBeside(path string) map[string]string {
	data, err := userfile.ReadFile(path + ".manifest.json")
	if err != nil {
		return nil
	}
	var m struct {
		Metadata map[string]string `json:"metadata"`
		Output   *plan.Input       `json:"output"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.Metadata) == 0 || m.Output == nil || m.Output.Name != filepath.Base(path) {
		return nil
	}
	if in, err := hashFile(path); err != nil || in != *m.Output {
		return nil
	}
	return m.Metadata
}
