// pymq-ref ships no MathJax: the book has no math and must never load a CDN.
// Sphinx injects this file (mathjax_path in _config.yml) only on pages containing math.
console.warn("pymq-ref: math found on this page, but MathJax is not vendored (see _config.yml)");
