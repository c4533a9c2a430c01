package v1alpha1

import (
	"fmt"
	"strings"
)

// InventoryEntry is ref in the Inventory's compact form,
// "<namespace>_<name>_<group>_<kind>_<version>". None of the parts can hold
// an underscore, so the form splits back unambiguously.
func InventoryEntry(ref ObjectRef) string {
	return strings.Join([]string{ref.Namespace, ref.Name, ref.Group, ref.Kind, ref.Version}, "_")
}

// ParseInventoryEntry reverses InventoryEntry. The sync-controller, ksync and
// the console read inventories written by the sync-controller, but the
// Revision's status is only as trustworthy as whoever may write it, so a
// malformed entry is an error, never a guess.
func ParseInventoryEntry(entry string) (ObjectRef, error) {
	parts := strings.Split(entry, "_")
	if len(parts) != 5 || parts[1] == "" || parts[3] == "" || parts[4] == "" {
		return ObjectRef{}, fmt.Errorf("inventory entry %q is not <namespace>_<name>_<group>_<kind>_<version>", entry)
	}
	return ObjectRef{Namespace: parts[0], Name: parts[1], Group: parts[2], Kind: parts[3], Version: parts[4]}, nil
}
