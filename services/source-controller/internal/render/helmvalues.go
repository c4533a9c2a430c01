package render

// The user's Helm values: valuesFiles, valuesFrom and values merged in
// that order, without touching the caller's maps.

import (
	"errors"
	"io/fs"
	"path"

	"helm.sh/helm/v3/pkg/chartutil"
)

// helmValues merges the user's values, later winning: valuesFiles in
// order, valuesFrom in order, then values. Nulls are kept so that a null
// removes a chart default when Helm coalesces these with the chart's values.
func helmValues(repo *repoFS, req Request, dir string) (map[string]any, error) {
	var layers []map[string]any
	for _, vf := range req.Helm.ValuesFiles {
		rel, err := cleanRelative(vf)
		if err != nil {
			return nil, validationFailure(vf, "valuesFiles entry %w", err)
		}
		data, file, decrypted, err := repo.readFile(path.Join(dir, rel))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, renderFailed(path.Join(dir, rel), "values file does not exist")
			}
			return nil, err
		}
		vals, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, renderFailed(file, "values file is not valid YAML: %s", parserDetail(err, decrypted))
		}
		layers = append(layers, vals)
	}
	for _, vals := range req.Helm.ValuesFrom {
		// valuesFrom may come from Secrets: never repeat them in errors.
		repo.secrets.addValue(map[string]any(vals))
		layers = append(layers, vals)
	}
	layers = append(layers, req.Helm.Values)

	merged := map[string]any{}
	for i := len(layers) - 1; i >= 0; i-- {
		// MergeTables keeps its first argument's values and links in maps of
		// the second: copy, so the caller's maps stay untouched.
		merged = chartutil.MergeTables(merged, deepCopyMap(layers[i]))
	}
	return merged, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case chartutil.Values:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}
