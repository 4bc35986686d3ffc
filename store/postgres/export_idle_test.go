package postgres

import "github.com/tractdag/tract/store"

// Setting returns the value of the server setting name in tx, as
// current_setting shows it.
func Setting(tx store.Tx, name string) (string, error) {
	var v string
	err := tx.(*pgTx).queryRow(`SELECT current_setting($1)`, name).Scan(&v)
	return v, err
}
