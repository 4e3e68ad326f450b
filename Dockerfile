# The control plane image: web, worker, beat and the local emulator (which runs the trainers,
# so it carries the `trainers` extra with the CPU build of torch).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml constraints.txt ./
COPY controlplane controlplane
COPY jobs jobs
COPY localvertex localvertex
COPY trainers trainers
RUN pip install --no-cache-dir -c constraints.txt \
      --extra-index-url https://download.pytorch.org/whl/cpu -e ".[trainers]"
COPY manage.py ./
COPY templates templates
COPY static static
EXPOSE 8000 8470
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", "--keep-alive", "5"]
