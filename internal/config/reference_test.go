package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referencePath is the configuration reference, from the module's root.
const referencePath = "docs/configuration.md"

// The reference lists every environment variable the code reads, and no
// other: a variable added to the code without its line in the reference, or
// one the code no longer reads but the reference still explains, fails.
func TestReferenceListsEveryVariable(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	read, err := variablesRead(root)
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, referencePath))
	require.NoError(t, err)
	listed := variablesListed(doc)

	var unlisted []string
	for name, where := range read {
		if !slices.Contains(listed, name) {
			unlisted = append(unlisted, name+" (read in "+where+")")
		}
	}
	slices.Sort(unlisted)
	assert.Empty(t, unlisted, "%s lists no row for these variables the code reads", referencePath)
	var unread []string
	for _, name := range listed {
		if _, ok := read[name]; !ok {
			unread = append(unread, name)
		}
	}
	assert.Empty(t, unread, "%s lists variables no code reads any more", referencePath)
}

// The scan finds each way edihub's code reads a variable, so that the test
// above cannot pass by finding nothing.
func TestVariablesReadFindsEveryForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package x

const aConstant = "A_CONSTANT"

func f(getenv func(string) string, env struct{ Getenv func(string) string }) {
	_ = os.Getenv("A_GETENV")
	_, _ = os.LookupEnv("A_LOOKUP")
	_ = env.Getenv("A_FIELD")
	_ = getenv("A_PARAMETER")
	_ = positiveDuration(getenv, "A_HELPER", time.Second, nil)
	_ = os.Getenv(aConstant)
	_ = strings.ToUpper("NOT_A_VARIABLE")
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600))
	read, err := variablesRead(dir)
	require.NoError(t, err)
	var names []string
	for name := range read {
		names = append(names, name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"A_CONSTANT", "A_FIELD", "A_GETENV", "A_HELPER", "A_LOOKUP", "A_PARAMETER"}, names)
	require.Equal(t, []string{"B", "C_D"}, variablesListed([]byte("| `B` | 1 | b |\n| variable | default |\n|`x`| no |\n| `C_D` | | c |\n")))
}

// skippedDirs hold no code of edihub's.
var skippedDirs = []string{"node_modules", ".data", ".git", "bin"}

// variablesRead returns each environment variable the Go files under root
// read, with one place it is read: the argument of os.Getenv, os.LookupEnv
// or any Getenv or getenv function (the CLI's env.Getenv, config.Load's
// getenv), and the name that follows a getenv passed to one of the config
// package's helpers (positiveDuration(getenv, "SWEEP_INTERVAL", …)); a name
// is a string literal or a string constant of the package.
func variablesRead(root string) (map[string]string, error) {
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // by directory: a package and its tests
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && slices.Contains(skippedDirs, d.Name()):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		files[filepath.Dir(path)] = append(files[filepath.Dir(path)], file)
		return err
	})
	if err != nil {
		return nil, err
	}
	read := map[string]string{}
	for _, pkg := range files {
		consts := stringConstants(pkg)
		for _, file := range pkg {
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				for _, name := range namesRead(call, consts) {
					if _, seen := read[name]; !seen {
						pos := fset.Position(call.Pos())
						rel, _ := filepath.Rel(root, pos.Filename)
						read[name] = rel + ":" + strconv.Itoa(pos.Line)
					}
				}
				return true
			})
		}
	}
	return read, nil
}

// stringConstants is the string constants the files declare, by name.
func stringConstants(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, file := range files {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if value, ok := stringLiteral(vs.Values[i], nil); ok {
							consts[name.Name] = value
						}
					}
				}
			}
		}
	}
	return consts
}

// namesRead is the variables call reads, by the forms variablesRead names.
func namesRead(call *ast.CallExpr, consts map[string]string) []string {
	var names []string
	if isReader(call.Fun) && len(call.Args) > 0 {
		if name, ok := stringLiteral(call.Args[0], consts); ok {
			names = append(names, name)
		}
	}
	for i, arg := range call.Args[:max(len(call.Args)-1, 0)] {
		if id, ok := arg.(*ast.Ident); ok && id.Name == "getenv" {
			if name, ok := stringLiteral(call.Args[i+1], consts); ok {
				names = append(names, name)
			}
		}
	}
	return names
}

// isReader reports whether fun reads an environment variable.
func isReader(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	return name == "Getenv" || name == "getenv" || name == "LookupEnv"
}

// stringLiteral is the string e is: a literal, or one of consts by name.
func stringLiteral(e ast.Expr, consts map[string]string) (string, bool) {
	if id, ok := e.(*ast.Ident); ok {
		value, ok := consts[id.Name]
		return value, ok
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// referenceRow is a row of the reference's tables: its first cell names a
// variable in backquotes.
var referenceRow = regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]*)` \\|")

// variablesListed returns the variables the reference's tables list, each
// once, in order.
func variablesListed(doc []byte) []string {
	var names []string
	for _, m := range referenceRow.FindAllSubmatch(doc, -1) {
		if name := string(m[1]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// deployedSettings is the settings file deploy/systemd's unit reads.
const deployedSettings = "deploy/systemd/edihub.env"

// The deployed settings name only variables edihub reads: a misspelt or
// retired name there would be silently ignored on every machine set up
// from it.
func TestDeployedSettingsAreVariablesEdihubReads(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	read, err := variablesRead(root)
	require.NoError(t, err)
	settings, err := os.ReadFile(filepath.Join(root, deployedSettings))
	require.NoError(t, err)
	var names []string
	for line := range strings.Lines(string(settings)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not NAME=value", deployedSettings, line)
		names = append(names, name)
		assert.Contains(t, read, name, "%s sets %s, which edihub does not read", deployedSettings, name)
	}
	require.Contains(t, names, "DATABASE_URL", "the settings were read")
}
