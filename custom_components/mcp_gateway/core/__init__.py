"""The foundation the other parts read: constants, local times, settings, availability."""
