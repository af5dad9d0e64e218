package check

import "github.com/critsec/critsec/check/internal/store"

// MemoEntries lets tests shrink or disable the memo of machine calls.
var MemoEntries = &memoEntries

// MergeCrashed lets tests encode crashed processes with their budget and
// suspicions, as before they were merged.
var MergeCrashed = &mergeCrashed

// CheckpointSaved lets tests see each checkpoint a run saves.
var CheckpointSaved = &store.Saved
