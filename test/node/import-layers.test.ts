// The code's folders form layers: no folder of src/ (nor a file at its root) imports, directly or through others,
// something that imports it back, and no file does. A cycle would be found here, with the imports that make it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*"(\.[^"]+)"/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file an import names: the spelling given, with `.ts`, or a folder's index. */
function resolveImport(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not this spelling; the next is tried.
    }
  }
  return null;
}

/** Every import between two source files of src/, as relative paths. */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    const targets = new Set<string>();
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = resolveImport(file, match[1] ?? "");
      if (target?.startsWith(SRC)) targets.add(relative(SRC, target));
    }
    graph.set(from, targets);
  }
  return graph;
}

/** The graph's strongly connected parts of more than one node (Tarjan): each is a cycle, or several. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      part.push(member);
      if (member === node) break;
    }
    if (part.length > 1) found.push(part.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** A file's layer: its folder under src/, or the file itself at the root. */
const layerOf = (file: string) => (file.includes("/") ? `${file.split("/")[0]}/` : file);

describe("the code's layers", () => {
  const files = importGraph();

  it("has no import cycle between folders of src/", () => {
    const layers = new Map<string, Set<string>>();
    for (const [from, targets] of files) {
      const edges = layers.get(layerOf(from)) ?? new Set<string>();
      for (const to of targets) if (layerOf(to) !== layerOf(from)) edges.add(layerOf(to));
      layers.set(layerOf(from), edges);
    }
    expect(cycles(layers)).toEqual([]);
  });

  it("has no import cycle between files", () => {
    expect(cycles(files)).toEqual([]);
  });

  it("finds a cycle when there is one (the check itself works)", () => {
    const graph = new Map([
      ["a/x.ts", new Set(["b/y.ts"])],
      ["b/y.ts", new Set(["a/x.ts"])],
    ]);
    expect(cycles(graph)).toEqual([["a/x.ts", "b/y.ts"]]);
  });
});
