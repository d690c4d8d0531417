"""HuggingFace config.json: the model-type tables VeOmni's architecture file is read and written with
(a format of its own later, issue #14)."""
