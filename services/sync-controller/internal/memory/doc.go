// Package memory holds what the sync-controller remembers between
// reconciles in its own process: which versions of Applications and
// Revisions it has seen, verified desired states, the waves it applied, the
// service accounts it found, and the drift watches that route changes of
// applied objects back to their Applications.
//
// None of it is a record: a rollout resumes from the Revision's status,
// and a new process starts with every memory empty and loses nothing but
// requests the memories saved. Every API takes plain keys (names, digests,
// attempt numbers), so the memories know nothing of a rollout.
package memory
