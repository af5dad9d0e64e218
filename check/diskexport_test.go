package check

import "github.com/critsec/critsec/check/internal/store"

// DiskMinSlots lets tests shrink the in-memory table of a visited set on
// disk (Config.DiskDir), so that small runs merge into the file many times.
var DiskMinSlots = &store.MinSlots
