package filterfile

import "github.com/ssmlab/ssmlab/internal/userfile"

// SetMaxSize lowers the writer's size limit for a test and returns what restores it.
func SetMaxSize(n int) (restore func()) {
	if maxSize != userfile.MaxSize {
		panic("filterfile: SetMaxSize nested")
	}
	maxSize = n
	return func() { maxSize = userfile.MaxSize }
}
