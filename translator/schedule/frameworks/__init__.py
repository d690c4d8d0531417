"""Each framework's own schedulers as pure functions of its config values: config -> canonical
schedule (exact), canonical schedule -> config (exact where the framework can, else the closest
form with the largest lr difference). These move into the format packages (translator/formats/*)
once those exist; they import nothing from outside translator.schedule."""
