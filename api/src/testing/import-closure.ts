import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The workspace source files a process loads from `entries`, transitively: static imports and
 * re-exports, side-effect imports and `import('...')` with a literal specifier, followed from
 * sources to sources. A workspace package (`@vtl/x`, `@vtl/x/sub`) is followed through its
 * package.json `exports` (dist/<f>.js read as src/<f>.ts); other packages are not followed.
 * `import type` and `export type` are left out: under verbatimModuleSyntax they are the only
 * imports erased, so what this returns is what the built process can load. Paths are relative
 * to `root`, like KeyWrite.file.
 */
export function importClosure(root: string, entries: string[]): Set<string> {
  const packages = workspacePackages(root);
  const seen = new Set<string>();
  const queue = entries.map((e) => path.resolve(root, e));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !fs.existsSync(file)) continue;
    seen.add(file);
    for (const spec of runtimeSpecifiers(file)) {
      const target = resolve(spec, file, packages);
      if (target && !seen.has(target)) queue.push(target);
    }
  }
  return new Set([...seen].map((f) => path.relative(root, f)));
}

/** The specifiers a module loads at run time (type-only imports and re-exports left out). */
function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2023, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      if (!node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier))
        out.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
        out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

interface WorkspacePackage {
  dir: string;
  exports: Record<string, unknown>;
}

/** `@vtl/<name>` → its directory and exports, from the root package.json's workspaces. */
function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  const out = new Map<string, WorkspacePackage>();
  for (const ws of rootPkg.workspaces) {
    const dir = path.join(root, ws);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      name: string;
      exports?: Record<string, unknown>;
      main?: string;
    };
    out.set(pkg.name, { dir, exports: pkg.exports ?? (pkg.main ? { '.': `./${pkg.main}` } : {}) });
  }
  return out;
}

function resolve(spec: string, from: string, packages: Map<string, WorkspacePackage>): string | undefined {
  if (spec.startsWith('.')) {
    const file = path.resolve(path.dirname(from), spec);
    for (const candidate of [file.replace(/\.js$/, '.ts'), file, `${file}.ts`, path.join(file, 'index.ts')])
      if (candidate.endsWith('.ts') && fs.existsSync(candidate)) return candidate;
    return undefined;
  }
  const name = spec.split('/').slice(0, 2).join('/');
  const pkg = packages.get(name);
  if (!pkg) return undefined; // a package from node_modules, or node:
  const entry = pkg.exports[`.${spec.slice(name.length)}`];
  const target =
    typeof entry === 'string'
      ? entry
      : ((entry as { default?: string; import?: string } | undefined)?.default ??
        (entry as { import?: string } | undefined)?.import);
  if (!target) return undefined;
  return path.join(pkg.dir, target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
}
