// Command render renders a Helm chart the way `helm template` does, for the chart's tests:
// helm itself is not installable here, so this is Go's text/template with sprig's functions
// (Debian's golang and sprig packages) and Helm's own additions (include, tpl, required,
// toYaml, fromYaml, lookup, .Files), values merged as Helm merges them and checked against
// values.schema.json (gojsonschema, the library Helm uses).
//
//	render -chart charts/vtl [-values f.yaml]... [-lookup objects.json] [-upgrade] [-notes]
//
// Prints every rendered manifest as `---\n# Source: <chart>/templates/<file>\n...`; with -notes
// NOTES.txt instead. Errors (a failed `fail`/`required`, a schema violation) go to stderr with
// exit status 1.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"github.com/xeipuuv/gojsonschema"
	"gopkg.in/yaml.v3"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// files is .Files: the chart's non-template files.
type files map[string][]byte

func (f files) Get(name string) string { return string(f[name]) }
func (f files) Glob(pattern string) files {
	out := files{}
	for name, data := range f {
		if ok, _ := path.Match(pattern, name); ok {
			out[name] = data
		}
	}
	return out
}

type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

func fatal(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "render: "+format+"\n", args...)
	os.Exit(1)
}

func readYAML(file string) map[string]interface{} {
	data, err := os.ReadFile(file)
	if err != nil {
		fatal("%v", err)
	}
	out := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		fatal("%s: %v", file, err)
	}
	return normalize(out).(map[string]interface{})
}

// normalize turns YAML's map[interface{}]interface{} and ints into what JSON would give Helm.
func normalize(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case map[interface{}]interface{}:
		out := map[string]interface{}{}
		for k, x := range t {
			out[fmt.Sprint(k)] = normalize(x)
		}
		return out
	case []interface{}:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	}
	return v
}

// merge lays src over dst as Helm coalesces values: maps merge, null removes a key.
func merge(dst, src map[string]interface{}) map[string]interface{} {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(map[string]interface{}); ok {
			if dm, ok := dst[k].(map[string]interface{}); ok {
				dst[k] = merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

func toYAML(v interface{}) string {
	// Through JSON first, as Helm's sigs.k8s.io/yaml does: floats that are integers print as such.
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var generic interface{}
	_ = yaml.Unmarshal(data, &generic)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(generic); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func main() {
	chartDir := flag.String("chart", "charts/vtl", "chart directory")
	release := flag.String("release", "vtl", "release name")
	namespace := flag.String("namespace", "vtl", "release namespace")
	lookupFile := flag.String("lookup", "", "JSON object of existing cluster objects, keyed `<apiVersion>/<kind>/<namespace>/<name>`")
	upgrade := flag.Bool("upgrade", false, "render as an upgrade (.Release.IsUpgrade)")
	notes := flag.Bool("notes", false, "print NOTES.txt instead of the manifests")
	var valueFiles, apis multi
	flag.Var(&valueFiles, "values", "values file laid over values.yaml (repeatable)")
	flag.Var(&apis, "api-versions", "extra API versions the cluster serves (repeatable)")
	flag.Parse()

	chart := readYAML(filepath.Join(*chartDir, "Chart.yaml"))
	values := readYAML(filepath.Join(*chartDir, "values.yaml"))
	for _, f := range valueFiles {
		values = merge(values, readYAML(f))
	}
	if schema, err := os.ReadFile(filepath.Join(*chartDir, "values.schema.json")); err == nil {
		res, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewGoLoader(values))
		if err != nil {
			fatal("values.schema.json: %v", err)
		}
		if !res.Valid() {
			msgs := []string{}
			for _, e := range res.Errors() {
				msgs = append(msgs, e.String())
			}
			sort.Strings(msgs)
			fatal("values don't meet the specifications of the schema(s):\n%s", strings.Join(msgs, "\n"))
		}
	}
	cluster := map[string]map[string]interface{}{}
	if *lookupFile != "" {
		data, err := os.ReadFile(*lookupFile)
		if err != nil {
			fatal("%v", err)
		}
		if err := json.Unmarshal(data, &cluster); err != nil {
			fatal("%s: %v", *lookupFile, err)
		}
	}

	name := chart["name"].(string)
	chartFiles := files{}
	var templates []string
	err := filepath.Walk(*chartDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(*chartDir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(rel, "templates/") {
			tname := name + "/" + rel
			templates = append(templates, tname)
			return nil
		}
		chartFiles[rel] = data
		return nil
	})
	if err != nil {
		fatal("%v", err)
	}

	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			out["Error"] = err.Error()
		}
		return normalize(out).(map[string]interface{})
	}
	funcs["fromJson"] = func(s string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			out["Error"] = err.Error()
		}
		return out
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["lookup"] = func(apiVersion, kind, ns, n string) map[string]interface{} {
		if obj, ok := cluster[apiVersion+"/"+kind+"/"+ns+"/"+n]; ok {
			return obj
		}
		return map[string]interface{}{}
	}
	funcs["include"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["tpl"] = func(string, interface{}) (string, error) { return "", nil }
	root := template.New("chart").Funcs(funcs).Option("missingkey=zero")
	for _, tname := range templates {
		data, _ := os.ReadFile(filepath.Join(*chartDir, strings.TrimPrefix(tname, name+"/")))
		if _, err := root.New(tname).Parse(string(data)); err != nil {
			fatal("%v", err)
		}
	}
	root.Funcs(template.FuncMap{
		"include": func(n string, data interface{}) (string, error) {
			var buf bytes.Buffer
			err := root.ExecuteTemplate(&buf, n, data)
			return buf.String(), err
		},
		"tpl": func(text string, data interface{}) (string, error) {
			t, err := root.Clone()
			if err == nil {
				t, err = t.New("tpl").Parse(text)
			}
			if err != nil {
				return "", err
			}
			var buf bytes.Buffer
			err = t.Execute(&buf, data)
			return buf.String(), err
		},
	})

	top := map[string]interface{}{
		"Values": values,
		"Chart": map[string]interface{}{
			"Name": name, "Version": chart["version"], "AppVersion": chart["appVersion"],
		},
		"Release": map[string]interface{}{
			"Name": *release, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": !*upgrade, "IsUpgrade": *upgrade, "Revision": 1,
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v1.30.0", "Major": "1", "Minor": "30"},
			"APIVersions": append(apiVersions{"v1", "apps/v1", "policy/v1", "apiextensions.k8s.io/v1"}, apis...),
		},
		"Files": chartFiles,
	}
	sort.Strings(templates)
	var out bytes.Buffer
	for _, tname := range templates {
		base := path.Base(tname)
		isNotes := base == "NOTES.txt"
		if strings.HasPrefix(base, "_") || isNotes != *notes {
			continue
		}
		var buf bytes.Buffer
		top["Template"] = map[string]interface{}{"Name": tname, "BasePath": name + "/templates"}
		if err := root.ExecuteTemplate(&buf, tname, top); err != nil {
			fatal("%v", err)
		}
		if *notes {
			out.Write(buf.Bytes())
			continue
		}
		if strings.TrimSpace(buf.String()) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", tname, strings.TrimSpace(buf.String()))
	}
	os.Stdout.Write(out.Bytes())
}
