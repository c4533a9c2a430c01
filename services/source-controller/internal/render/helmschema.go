package render

// Values schema validation: values.schema.json of a chart and its enabled
// subcharts, with no external $ref ever resolved.

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// schemaURL is where each chart's values.schema.json is registered with
// the compiler; nothing is ever loaded from it.
const schemaURL = "file:///values.schema.json"

// validateSchemas checks values against the values.schema.json of the
// chart and of every enabled subchart, as Helm does, but resolves no
// external $ref: a chart must not make the controller fetch URLs or read
// the controller's files.
func validateSchemas(chrt *chart.Chart, values map[string]any) error {
	var problems []string
	if len(chrt.Schema) > 0 {
		if err := validateSchema(chrt.Schema, values); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", chrt.Name(), strings.TrimSpace(err.Error())))
		}
	}
	for _, sub := range chrt.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			if v, isValues := raw.(chartutil.Values); isValues {
				subValues = v
			} else {
				problems = append(problems, fmt.Sprintf("%s: values are a %T, not a map", sub.Name(), raw))
				continue
			}
		}
		if err := validateSchemas(sub, subValues); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func validateSchema(schemaJSON []byte, values map[string]any) (err error) {
	defer func() {
		// The validator panics on some malformed schemas; Helm recovers too.
		if r := recover(); r != nil {
			err = fmt.Errorf("unable to validate schema: %v", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return fmt.Errorf("values.schema.json is not valid JSON: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	// No loaders at all: only the schema itself and the built-in
	// metaschemas resolve.
	compiler.UseLoader(jsonschema.SchemeURLLoader{})
	if err := compiler.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("values.schema.json cannot be used: %w", err)
	}
	schema, err := compiler.Compile(schemaURL)
	if err != nil {
		return fmt.Errorf("values.schema.json cannot be used (documents outside it are never loaded): %w", err)
	}
	if err := schema.Validate(values); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n"))
	}
	return nil
}
