"""The Gemini adapter: the only package that imports google.genai."""
