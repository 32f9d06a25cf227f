import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The runtime import cycles among a package's modules (its src/, tests left out), each as the
 * files that form it, relative to dir. Only imports that load a module count: `import type`,
 * `export type` and imports whose every name is a type are erased by the compiler, so they
 * cannot leave a module half-initialised when the cycle is entered from the other side.
 */
export function runtimeImportCycles(dir: string): string[][] {
  const files = (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f));
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2023);
    const targets: string[] = [];
    for (const stmt of source.statements) {
      const spec = runtimeSpecifier(stmt);
      if (!spec?.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
      if (known.has(target)) targets.push(target);
    }
    edges.set(file, targets);
  }
  return stronglyConnected(edges)
    .filter((c) => c.length > 1 || edges.get(c[0]!)!.includes(c[0]!))
    .map((c) => c.map((f) => path.relative(dir, f)).sort());
}

/** The module a statement loads at run time, if any. */
function runtimeSpecifier(stmt: ts.Statement): string | undefined {
  if (ts.isImportDeclaration(stmt)) {
    const clause = stmt.importClause;
    if (clause?.isTypeOnly) return undefined;
    const bindings = clause?.namedBindings;
    const onlyTypes =
      clause && !clause.name && bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0
        ? bindings.elements.every((e) => e.isTypeOnly)
        : false;
    return onlyTypes ? undefined : (stmt.moduleSpecifier as ts.StringLiteral).text;
  }
  if (ts.isExportDeclaration(stmt) && stmt.moduleSpecifier && !stmt.isTypeOnly) {
    const clause = stmt.exportClause;
    const onlyTypes = clause && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly);
    return onlyTypes ? undefined : (stmt.moduleSpecifier as ts.StringLiteral).text;
  }
  return undefined;
}

/** Tarjan's strongly connected components of a directed graph. */
function stronglyConnected(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return components;
}
