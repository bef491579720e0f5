"""HTTP: the FastAPI application, its routes, schemas and error rendering."""
