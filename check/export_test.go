package check

// MemoEntries lets tests shrink or disable the memo of machine calls.
var MemoEntries = &memoEntries
