import path from 'node:path';
import ts from 'typescript';

/**
 * Finds every etcd write in the workspace sources and the key family (`keys.<family>` of
 * api/src/keys.ts) each one writes. A write is a call of a Store's create, put, casPut, update,
 * delete or deletePrefix, or of a transaction's put, delete or deleteRange. Its key is followed
 * through constants, `const` destructuring, template literals, conditionals and helper calls
 * back to the key builders, and through a function parameter to every call of that function in
 * the same file (a helper taking a key from another file is not followed: its key is unknown). The ownership test (key-ownership.test.ts) compares what it finds with
 * KEY_OWNERS.
 */
export interface KeyWrite {
  /** Path from the repository root. */
  file: string;
  line: number;
  method: string;
  /** The families the key may belong to; empty when it could not be followed back to keys.ts. */
  families: string[];
  text: string;
}

const STORE_WRITES = new Set(['create', 'put', 'casPut', 'update', 'delete', 'deletePrefix']);
const TXN_WRITES = new Set(['put', 'delete', 'deleteRange']);

/** The workspace source files: every package's src, without tests, test support, dist or the console UI. */
export function workspaceSources(root: string): string[] {
  return ts.sys
    .readDirectory(
      root,
      ['.ts'],
      ['**/node_modules', '**/dist', 'console', '**/*.test.ts', '**/*.d.ts'],
      ['*/src/**/*'],
    )
    .filter((f) => !/\/(node_modules|dist|testing)\/|\/src\/test\//.test(f));
}

export function findKeyWrites(root: string, files = workspaceSources(root)): KeyWrite[] {
  // Workspace packages resolve to their sources, and other packages' declarations are left
  // out (read as empty): the analysis needs the types of this code only, and reading fastify's
  // or the AWS SDK's declarations would take most of a minute.
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
    strict: true,
    types: [],
    baseUrl: root,
    paths: { '@vtl/store/testing': ['store/src/testing/index.ts'], '@vtl/*': ['*/src/index.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, version, onError, create) =>
    fileName.includes('/node_modules/') && !fileName.includes('/node_modules/typescript/lib/')
      ? ts.createSourceFile(fileName, 'export {};', version)
      : readSource(fileName, version, onError, create);
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  const writes: KeyWrite[] = [];
  const wanted = new Set(files.map((f) => path.resolve(f)));

  /** Whether an expression is the `keys` object of keys.ts. */
  const isKeysObject = (e: ts.Expression): boolean => {
    if (!ts.isIdentifier(e) || e.text !== 'keys') return false;
    const sym = checker.getSymbolAtLocation(e);
    const target = sym && sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    const decl = target?.valueDeclaration;
    return Boolean(decl && decl.getSourceFile().fileName.endsWith('api/src/keys.ts'));
  };

  /** The family a `keys.<family>...` access names. */
  const familyOfAccess = (e: ts.Expression): string | undefined => {
    let cur: ts.Expression = e;
    let last: string | undefined;
    while (
      ts.isPropertyAccessExpression(cur) ||
      ts.isCallExpression(cur) ||
      ts.isElementAccessExpression(cur)
    ) {
      if (ts.isPropertyAccessExpression(cur)) {
        last = cur.name.text;
        cur = cur.expression;
      } else cur = cur.expression;
    }
    return isKeysObject(cur) ? last : undefined;
  };

  function families(e: ts.Node, seen: Set<ts.Node>, depth = 0): Set<string> {
    const out = new Set<string>();
    if (seen.has(e) || depth > 12) return out;
    seen.add(e);
    const add = (s: Set<string>) => s.forEach((f) => out.add(f));
    if (
      ts.isParenthesizedExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isNonNullExpression(e) ||
      ts.isAwaitExpression(e) ||
      ts.isSpreadElement(e)
    )
      return families(e.expression, seen, depth + 1);
    if (ts.isPropertyAccessExpression(e) || ts.isCallExpression(e) || ts.isElementAccessExpression(e)) {
      const fam = familyOfAccess(e);
      if (fam) return new Set([fam]);
    }
    if (ts.isTemplateExpression(e)) {
      for (const span of e.templateSpans) add(families(span.expression, seen, depth + 1));
      return out;
    }
    if (ts.isBinaryExpression(e)) {
      add(families(e.left, seen, depth + 1));
      add(families(e.right, seen, depth + 1));
      return out;
    }
    if (ts.isConditionalExpression(e)) {
      add(families(e.whenTrue, seen, depth + 1));
      add(families(e.whenFalse, seen, depth + 1));
      return out;
    }
    if (ts.isCallExpression(e)) {
      // A helper that builds the key (e.g. `opKey(id)`): what its body returns.
      let decl: ts.Node | undefined = declarationOf(e.expression);
      if (decl && ts.isVariableDeclaration(decl)) decl = decl.initializer;
      if (
        decl &&
        (ts.isFunctionDeclaration(decl) || ts.isArrowFunction(decl) || ts.isFunctionExpression(decl))
      )
        add(returnedFamilies(decl, seen, depth + 1));
      for (const a of e.arguments) if (out.size === 0) add(families(a, seen, depth + 1));
      if (ts.isPropertyAccessExpression(e.expression) && out.size === 0)
        add(families(e.expression.expression, seen, depth + 1));
      return out;
    }
    if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) {
      const decl = declarationOf(e);
      if (decl) add(fromDeclaration(decl, seen, depth + 1));
      if (out.size === 0) add(families(e.expression, seen, depth + 1));
      return out;
    }
    if (ts.isIdentifier(e)) {
      const decl = declarationOf(e);
      if (decl) add(fromDeclaration(decl, seen, depth + 1));
      return out;
    }
    if (ts.isNewExpression(e)) {
      for (const a of e.arguments ?? []) add(families(a, seen, depth + 1));
      return out;
    }
    if (ts.isArrayLiteralExpression(e)) {
      for (const el of e.elements) add(families(el, seen, depth + 1));
      return out;
    }
    return out;
  }

  function declarationOf(e: ts.Expression): ts.Declaration | undefined {
    let sym = checker.getSymbolAtLocation(e);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    return sym?.valueDeclaration ?? sym?.declarations?.[0];
  }

  function fromDeclaration(decl: ts.Declaration, seen: Set<ts.Node>, depth: number): Set<string> {
    if (ts.isVariableDeclaration(decl) && decl.initializer) return families(decl.initializer, seen, depth);
    // `for (const item of items)`: what the items are.
    if (ts.isVariableDeclaration(decl) && ts.isForOfStatement(decl.parent.parent))
      return families(decl.parent.parent.expression, seen, depth);
    if (ts.isPropertyAssignment(decl)) return families(decl.initializer, seen, depth);
    if (ts.isShorthandPropertyAssignment(decl)) return families(decl.name, seen, depth);
    if (ts.isBindingElement(decl)) {
      // `const { key } = x` or a parameter destructured: follow the whole object.
      let parent: ts.Node = decl.parent;
      while (
        ts.isObjectBindingPattern(parent) ||
        ts.isArrayBindingPattern(parent) ||
        ts.isBindingElement(parent)
      )
        parent = parent.parent;
      if (ts.isVariableDeclaration(parent) && parent.initializer)
        return families(parent.initializer, seen, depth);
      if (ts.isVariableDeclaration(parent) && ts.isForOfStatement(parent.parent.parent))
        return families(parent.parent.parent.expression, seen, depth);
      if (ts.isParameter(parent)) return fromParameter(parent, seen, depth);
      return new Set();
    }
    if (ts.isParameter(decl)) return fromParameter(decl, seen, depth);
    if (ts.isFunctionDeclaration(decl) || ts.isArrowFunction(decl))
      return returnedFamilies(decl, seen, depth);
    return new Set();
  }

  /** A parameter's key: what every call of its function in the same file passes there. */
  function fromParameter(param: ts.ParameterDeclaration, seen: Set<ts.Node>, depth: number): Set<string> {
    const out = new Set<string>();
    const fn = param.parent;
    const index = fn.parameters.indexOf(param);
    let name: ts.Node | undefined;
    if (ts.isFunctionDeclaration(fn) && fn.name) name = fn.name;
    else if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isVariableDeclaration(fn.parent))
      name = fn.parent.name;
    else if (ts.isMethodDeclaration(fn)) name = fn.name;
    if (!name) return out;
    const target = checker.getSymbolAtLocation(name);
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n)) {
        const callee = ts.isPropertyAccessExpression(n.expression) ? n.expression.name : n.expression;
        let sym = checker.getSymbolAtLocation(callee);
        if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
        const arg = n.arguments[index];
        if (sym === target && arg) families(arg, seen, depth + 1).forEach((f) => out.add(f));
      }
      ts.forEachChild(n, visit);
    };
    visit(param.getSourceFile());
    return out;
  }

  function returnedFamilies(fn: ts.SignatureDeclaration, seen: Set<ts.Node>, depth: number): Set<string> {
    const out = new Set<string>();
    const body = (fn as ts.FunctionLikeDeclarationBase).body;
    if (!body) return out;
    if (!ts.isBlock(body)) return families(body, seen, depth);
    const visit = (n: ts.Node) => {
      if (ts.isReturnStatement(n) && n.expression)
        families(n.expression, seen, depth).forEach((f) => out.add(f));
      if (!ts.isFunctionLike(n)) ts.forEachChild(n, visit);
    };
    ts.forEachChild(body, visit);
    return out;
  }

  /**
   * A key this analysis cannot follow (it comes from a work queue or a list built elsewhere) is
   * declared where it is written, on the line above: `// writes keys.<family>[, keys.<family>]`.
   */
  function declaredFamilies(call: ts.CallExpression): Set<string> | undefined {
    const sf = call.getSourceFile();
    const line = sf.getLineAndCharacterOfPosition(call.getStart()).line;
    const lines = sf.text.split('\n');
    for (const l of [lines[line - 1] ?? '', lines[line] ?? '']) {
      const m = /\/\/ writes (keys\.\w+(?:, keys\.\w+)*)/.exec(l);
      if (m) return new Set(m[1]!.split(', ').map((k) => k.slice('keys.'.length)));
    }
    return undefined;
  }

  /** Whether the receiver of a call is the etcd Store or one of its transactions. */
  function receiverKind(e: ts.Expression): 'store' | 'txn' | undefined {
    const type = checker.getTypeAtLocation(e);
    const names = [type, ...(type.isUnion() ? type.types : [])].map((t) => t.getSymbol()?.getName());
    if (names.includes('Store')) return 'store';
    if (names.includes('Txn') || names.includes('EtcdTxn')) return 'txn';
    return undefined;
  }

  for (const sf of program.getSourceFiles()) {
    if (!wanted.has(path.resolve(sf.fileName))) continue;
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        const method = n.expression.name.text;
        if (STORE_WRITES.has(method) || TXN_WRITES.has(method)) {
          const kind = receiverKind(n.expression.expression);
          const isWrite =
            (kind === 'store' && STORE_WRITES.has(method)) || (kind === 'txn' && TXN_WRITES.has(method));
          const key = n.arguments[0];
          if (isWrite && key) {
            writes.push({
              file: path.relative(root, sf.fileName),
              line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1,
              method,
              families: [...(declaredFamilies(n) ?? families(key, new Set()))].sort(),
              text: key.getText().slice(0, 80),
            });
          }
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return writes;
}
