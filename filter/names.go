package filter

import "sort"

// Names returns every name a filter can use (packet names, fields and the
// fixed names such as type, dir and conv), sorted and each once, for a
// front end to complete what a user types.
func Names() []string {
	seen := make(map[string]bool, len(envNames))
	out := make([]string, 0, len(envNames))
	for _, n := range envNames {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
