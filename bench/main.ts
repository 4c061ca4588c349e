// Benchmarks: filled in by the benchmark work of each issue.
console.log("no benchmarks yet");
