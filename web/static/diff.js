// A line diff of two texts (longest common subsequence), for when the
// API's diff gives no lines of its own.

const MAX = 4000; // lines per side diffed line by line; beyond, shown whole

// lineDiff returns [{op: 'same'|'del'|'add', text}] turning a into b.
export function lineDiff(a, b) {
  const x = a.split('\n'), y = b.split('\n');
  if (x.length > MAX || y.length > MAX) {
    return [...x.map((text) => ({ op: 'del', text })), ...y.map((text) => ({ op: 'add', text }))];
  }
  const n = x.length, m = y.length;
  // lcs[i][j]: the longest common subsequence of x[i:] and y[j:].
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: 'same', text: x[i] }); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: 'del', text: x[i++] });
    else out.push({ op: 'add', text: y[j++] });
  }
  while (i < n) out.push({ op: 'del', text: x[i++] });
  while (j < m) out.push({ op: 'add', text: y[j++] });
  return out;
}
