import { csvCell, csvLine, csvStream } from '../../shared/http/csv';

describe('csv', () => {
  it('escapes cells a spreadsheet would run as formulas', () => {
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('plain')).toBe('plain');
  });

  it('leaves numbers alone, negative ones included, and quotes separators', () => {
    expect(csvCell(-25.5)).toBe('-25.5');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell(null)).toBe('');
    expect(csvLine(['x', 1, null])).toBe('x,1,\r\n');
  });

  it('streams a header and one line per row', async () => {
    async function* rows() {
      yield { a: 'one', b: 1 };
      yield { a: '=two', b: 2 };
    }
    const stream = csvStream(
      [
        { header: 'a', value: (r: { a: string; b: number }) => r.a },
        { header: 'b', value: (r: { a: string; b: number }) => r.b },
      ],
      rows(),
    );
    let text = '';
    for await (const chunk of stream) text += chunk;
    // The byte order mark first, for Excel.
    expect(text).toBe("\ufeffa,b\r\none,1\r\n'=two,2\r\n");
  });
});
