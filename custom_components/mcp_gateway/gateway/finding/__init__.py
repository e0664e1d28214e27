"""Which of our entities a request means: index, homes, names as people say them."""
