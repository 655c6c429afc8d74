def register(suite): pass
