// Package policy chooses a tag from a registry's tag list the way an
// ImagePolicy's semver or tagPattern says. It takes tags in and gives a
// decision out; scanning the registry is the caller's.
package policy

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// ErrNoMatchingTag is returned when no tag satisfies the policy.
var ErrNoMatchingTag = errors.New("no tag matches the policy")

// InvalidError is a policy the user must fix; Field names it.
type InvalidError struct {
	Field string
	Msg   string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Msg }

// Selector picks one tag from a list.
type Selector interface {
	Select(tags []string) (string, error)
}

// New validates p and returns its selector. The digest policy needs no
// selection and is refused here.
func New(p syncv1.ImageSelectionPolicy) (Selector, error) {
	switch {
	case p.SemVer != nil:
		c, err := semver.NewConstraint(p.SemVer.Range)
		if err != nil {
			return nil, &InvalidError{Field: "spec.policy.semver.range", Msg: fmt.Sprintf("%q is not a SemVer range: %v", p.SemVer.Range, err)}
		}
		return semverSelector{c}, nil
	case p.TagPattern != nil:
		return newTagPattern(*p.TagPattern)
	default:
		return nil, &InvalidError{Field: "spec.policy", Msg: "needs semver or tagPattern to select a tag"}
	}
}

// semverSelector picks the highest version in the range. Masterminds/semver
// considers pre-releases only when the range itself names one, which is
// what a user writing ">=1.0.0" expects.
type semverSelector struct{ c *semver.Constraints }

func (s semverSelector) Select(tags []string) (string, error) {
	var best *semver.Version
	bestTag := ""
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !s.c.Check(v) {
			continue
		}
		// Equal versions spelled differently (1.0.0, v1.0.0) tie-break on
		// the tag, so the choice does not depend on the registry's order.
		if best == nil || v.GreaterThan(best) || (v.Equal(best) && t > bestTag) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		return "", ErrNoMatchingTag
	}
	return bestTag, nil
}

type tagPattern struct {
	re        *regexp.Regexp
	extract   string
	numerical bool
	asc       bool
}

func newTagPattern(p syncv1.TagPatternPolicy) (Selector, error) {
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return nil, &InvalidError{Field: "spec.policy.tagPattern.regex", Msg: fmt.Sprintf("%q is not a valid regular expression: %v", p.Regex, err)}
	}
	if err := checkGroups(re, p.Extract); err != nil {
		return nil, err
	}
	s := tagPattern{re: re, extract: p.Extract}
	switch p.Sort {
	case "", syncv1.SortAlphabetical:
	case syncv1.SortNumerical:
		s.numerical = true
	default:
		return nil, &InvalidError{Field: "spec.policy.tagPattern.sort", Msg: fmt.Sprintf("%q is not alphabetical or numerical", p.Sort)}
	}
	switch p.Order {
	case "", syncv1.OrderDesc:
	case syncv1.OrderAsc:
		s.asc = true
	default:
		return nil, &InvalidError{Field: "spec.policy.tagPattern.order", Msg: fmt.Sprintf("%q is not asc or desc", p.Order)}
	}
	return s, nil
}

// checkGroups refuses an extract template naming a group the regex lacks,
// which would otherwise sort every tag by the empty string.
func checkGroups(re *regexp.Regexp, extract string) error {
	names := map[string]bool{}
	for i, n := range re.SubexpNames() {
		names[strconv.Itoa(i)] = true
		if n != "" {
			names[n] = true
		}
	}
	for _, ref := range templateRefs(extract) {
		if !names[ref] {
			return &InvalidError{Field: "spec.policy.tagPattern.extract",
				Msg: fmt.Sprintf("names group %q, which spec.policy.tagPattern.regex does not have", ref)}
		}
	}
	return nil
}

// templateRefs lists the $name and ${name} references of a regexp.Expand template.
func templateRefs(t string) []string {
	var refs []string
	for i := 0; i < len(t); i++ {
		if t[i] != '$' || i+1 >= len(t) {
			continue
		}
		rest := t[i+1:]
		switch {
		case rest[0] == '$':
			i++
		case rest[0] == '{':
			if end := strings.IndexByte(rest, '}'); end > 0 {
				refs = append(refs, rest[1:end])
				i += end + 1
			}
		default:
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= '0' && rest[n] <= '9' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z') {
				n++
			}
			if n > 0 {
				refs = append(refs, rest[:n])
				i += n
			}
		}
	}
	return refs
}

type candidate struct {
	tag, key string
	num      float64
}

func (s tagPattern) Select(tags []string) (string, error) {
	var cs []candidate
	for _, t := range tags {
		m := s.re.FindStringSubmatchIndex(t)
		if m == nil {
			continue
		}
		key := t
		if s.extract != "" {
			key = string(s.re.ExpandString(nil, s.extract, t, m))
		}
		c := candidate{tag: t, key: key}
		if s.numerical {
			n, err := strconv.ParseFloat(key, 64)
			if err != nil {
				continue
			}
			c.num = n
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return "", ErrNoMatchingTag
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if s.numerical && a.num != b.num {
			return a.num > b.num
		}
		if a.key != b.key {
			return a.key > b.key
		}
		return a.tag > b.tag
	})
	if s.asc {
		return cs[len(cs)-1].tag, nil
	}
	return cs[0].tag, nil
}
