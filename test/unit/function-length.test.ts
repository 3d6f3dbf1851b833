/** scripts/lint/function-length.ts: what it counts as a function's length, and where it stops. */
import { longFunctions, MAX_LINES } from '../../scripts/lint/function-length';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

describe('the function length lint', () => {
  it('reports a function over the bound, signature to closing brace, and not one at it', () => {
    // a signature line, the body's lines, the closing brace
    const at = `function fits() {\n${lines(MAX_LINES - 2)}\n}\n`;
    const over = `export const tooLong = () => {\n${lines(MAX_LINES - 1)}\n};\n`;
    expect(longFunctions('a.ts', at)).toEqual([]);
    expect(longFunctions('b.ts', over)).toEqual([{ line: 1, name: 'tooLong', lines: MAX_LINES + 1 }]);
  });

  it('counts what a function defines inside as its own lines, and names methods and properties', () => {
    const factory = `function handlers() {\n  return {\n    first: () => {\n${lines(MAX_LINES)}\n    },\n  };\n}\nclass Box {\n  method() {\n${lines(MAX_LINES)}\n  }\n}\n`;
    expect(longFunctions('c.ts', factory).map((f) => f.name)).toEqual(['handlers', 'first', 'method']);
  });
});
