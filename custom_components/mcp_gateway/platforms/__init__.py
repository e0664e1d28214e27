"""Each Home Assistant platform's entity class and description, over native objects."""
