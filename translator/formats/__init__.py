"""One module per format: read files into a Source, write target leaves into a document."""
